"""The central leadership's last sign of life: ``alive_ms``, renewed by the active process.

A replicated central server's process that takes over reads it to know how long no
server led: within the hold time the failover is bridged, past it play was interrupted
(R92.5e, R95.1; central_server/domain/stops.py).

Revision ID: 0003
Revises: 0002
"""

from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('central_leadership') as batch:
        batch.add_column(sa.Column('alive_ms', sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('central_leadership') as batch:
        batch.drop_column('alive_ms')
