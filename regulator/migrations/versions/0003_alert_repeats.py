"""Alerts limited per sender: the alerts of a kind counted on the one raised, and the last of them.

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
    with op.batch_alter_table('feed_alert', schema=None) as batch_op:
        batch_op.add_column(sa.Column('repeats', sa.Integer(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('last_seq', sa.Integer(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('last_time_ms', sa.BigInteger(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('feed_alert', schema=None) as batch_op:
        batch_op.drop_column('last_time_ms')
        batch_op.drop_column('last_seq')
        batch_op.drop_column('repeats')
