"""The append-only, hash-chained journal.

Revision ID: 0002
Revises: 0001
"""

from server_kit.journal.migration import create_journal_table, drop_journal_table


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    create_journal_table()


def downgrade() -> None:
    drop_journal_table()
