// Pipeline: filled by its issue.
