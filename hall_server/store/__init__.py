"""Persistence of the hall server: SQLAlchemy 2 models, migrations and repositories."""
