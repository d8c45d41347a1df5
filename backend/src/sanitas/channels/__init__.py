"""What the channels that run bodies in their own process (ICAP, the mail filter) share; it
imports nothing of sanitas."""
