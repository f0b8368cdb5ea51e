"""The journal's hashes no longer indexed: one index page a record less in each commit
(:func:`server_kit.journal.migration.drop_hash_uniqueness`).

Revision ID: 0004
Revises: 0003
"""

from server_kit.journal.migration import drop_hash_uniqueness, restore_hash_uniqueness


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    drop_hash_uniqueness()


def downgrade() -> None:
    restore_hash_uniqueness()
