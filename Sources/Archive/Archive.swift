// The archive arrives with the listening-archive issue.
