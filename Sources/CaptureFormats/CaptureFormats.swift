// CaptureFormats: filled by its issue.
