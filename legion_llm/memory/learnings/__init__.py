"""Mission learnings under .mission-control/memory/: read every variant, load for a goal, write and reinforce."""
