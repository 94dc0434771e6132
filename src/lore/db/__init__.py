"""Storage: where the database is, its schema, and connections to it."""
