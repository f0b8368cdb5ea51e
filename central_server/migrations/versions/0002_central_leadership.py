"""The central leadership: one row, the epoch of the process that may write the journal.

The row is made here, at epoch 0 (no process has taken the leadership yet), so a take
always updates one existing row, which PostgreSQL can lock (``SELECT ... FOR UPDATE``);
see central_server/leadership.py.

Revision ID: 0002
Revises: 0001
"""

from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    leadership = op.create_table('central_leadership',
    sa.Column('epoch', sa.Integer(), nullable=False),
    sa.Column('holder', sa.Text(), nullable=True),
    sa.Column('since_ms', sa.BigInteger(), nullable=True),
    )
    op.bulk_insert(leadership, [{'epoch': 0, 'holder': None, 'since_ms': None}])


def downgrade() -> None:
    op.drop_table('central_leadership')
