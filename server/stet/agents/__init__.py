"""What agents use: intake (every proposal source), derived proposals, tasks, resume."""
