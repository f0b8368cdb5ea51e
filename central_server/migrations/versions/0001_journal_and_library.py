"""The append-only, hash-chained journal and the central library of virtual cards.

Revision ID: 0001
Revises:
"""

from alembic import op
import sqlalchemy as sa

from server_kit.journal.migration import create_journal_table, drop_journal_table


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    create_journal_table()
    op.create_table('central_series',
    sa.Column('label', sa.String(length=8), nullable=False),
    sa.Column('card_count', sa.Integer(), nullable=False),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('cells', sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint('label', name=op.f('pk_central_series'))
    )


def downgrade() -> None:
    op.drop_table('central_series')
    drop_journal_table()
