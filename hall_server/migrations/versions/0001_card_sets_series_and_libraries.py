"""Card sets, series and virtual libraries.

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
    op.create_table('card_set',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.String(length=32), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_card_set')),
    sa.UniqueConstraint('name', name=op.f('uq_card_set_name'))
    )
    op.create_table('library',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('series', sa.String(length=32), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.String(length=32), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_library')),
    sa.UniqueConstraint('name', name=op.f('uq_library_name')),
    sa.UniqueConstraint('series', name=op.f('uq_library_series'))
    )
    op.create_table('library_card',
    sa.Column('library_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('strip', sa.Integer(), nullable=False),
    sa.Column('cells', sa.LargeBinary(length=27), nullable=False),
    sa.Column('code', sa.String(length=32), nullable=False),
    sa.ForeignKeyConstraint(['library_id'], ['library.id'], name=op.f('fk_library_card_library_id_library')),
    sa.PrimaryKeyConstraint('library_id', 'number', name=op.f('pk_library_card'))
    )
    op.create_table('series',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('set_id', sa.Integer(), nullable=False),
    sa.Column('face_value_cents', sa.Integer(), nullable=False),
    sa.Column('card_count', sa.Integer(), nullable=False),
    sa.Column('last_sold', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.String(length=32), nullable=False),
    sa.ForeignKeyConstraint(['set_id'], ['card_set.id'], name=op.f('fk_series_set_id_card_set')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_series')),
    sa.UniqueConstraint('number', name=op.f('uq_series_number'))
    )
    op.create_table('set_card',
    sa.Column('set_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('strip', sa.String(length=32), nullable=False),
    sa.Column('cells', sa.LargeBinary(length=27), nullable=False),
    sa.ForeignKeyConstraint(['set_id'], ['card_set.id'], name=op.f('fk_set_card_set_id_card_set')),
    sa.PrimaryKeyConstraint('set_id', 'number', name=op.f('pk_set_card'))
    )


def downgrade() -> None:
    op.drop_table('set_card')
    op.drop_table('series')
    op.drop_table('library_card')
    op.drop_table('library')
    op.drop_table('card_set')
