"""What a trial reaches: egress, the network by phase, strace's rules."""
