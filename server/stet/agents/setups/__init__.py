"""`stet integrate AGENT`: each agent's own project configuration, merged with what is there."""
