"""The append-only, hash-chained journal and the central library of virtual cards.

Revision ID: 0001
Revises:
"""

from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('journal',
    sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('time_ms', sa.BigInteger(), nullable=False),
    sa.Column('type', sa.String(length=64), nullable=False),
    sa.Column('payload', sa.Text(), nullable=False),
    sa.Column('prev', sa.String(length=64), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('signature', sa.String(length=128), nullable=False),
    sa.PrimaryKeyConstraint('seq', name=op.f('pk_journal')),
    sa.UniqueConstraint('hash', name=op.f('uq_journal_hash'))
    )
    with op.batch_alter_table('journal', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_journal_type'), ['type'], unique=False)
    op.create_table('central_series',
    sa.Column('label', sa.String(length=8), nullable=False),
    sa.Column('card_count', sa.Integer(), nullable=False),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('cells', sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint('label', name=op.f('pk_central_series'))
    )


def downgrade() -> None:
    op.drop_table('central_series')
    with op.batch_alter_table('journal', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_journal_type'))
    op.drop_table('journal')
