// SQLiteStore: filled by its issue.
