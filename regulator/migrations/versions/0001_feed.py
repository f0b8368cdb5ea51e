"""The receiver's senders, their records and the alerts.

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
    op.create_table('feed_sender',
    sa.Column('sender', sa.String(length=80), nullable=False),
    sa.Column('public_key', sa.Text(), nullable=False),
    sa.Column('last_seq', sa.Integer(), nullable=False),
    sa.Column('last_hash', sa.String(length=64), nullable=False),
    sa.Column('last_time_ms', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('sender', name=op.f('pk_feed_sender'))
    )
    op.create_table('feed_record',
    sa.Column('sender', sa.String(length=80), nullable=False),
    sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('time_ms', sa.BigInteger(), nullable=False),
    sa.Column('type', sa.String(length=64), nullable=False),
    sa.Column('payload', sa.Text(), nullable=False),
    sa.Column('prev', sa.String(length=64), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('signature', sa.String(length=128), nullable=False),
    sa.PrimaryKeyConstraint('sender', 'seq', name=op.f('pk_feed_record'))
    )
    op.create_table('feed_alert',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('sender', sa.String(length=80), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('detail', sa.Text(), nullable=False),
    sa.Column('time_ms', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_feed_alert')),
    sa.UniqueConstraint('sender', 'kind', 'seq', name='uq_feed_alert_once')
    )


def downgrade() -> None:
    op.drop_table('feed_alert')
    op.drop_table('feed_record')
    op.drop_table('feed_sender')
