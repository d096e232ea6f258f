"""Camera to seat hands: frame sources, the card detector, table zones, tracking,
the round state machine, recording and replay, and the synthetic scene generator."""
