"""The protocols' party programs (spec/92.12, 96, 97.13, 91.9): each party of a protocol as a state machine
that answers one request per phase and per election, refuses what is out of phase, repeated or from the wrong
sender, and derives its challenges and inputs from its own copy of the board. They run over `votum.nodes`,
the transport (identities, keystore, channels, streams), which knows nothing of any protocol.

- `ceremony`: the ElectionGuard key ceremony between guardian processes (spec/96);
- `chvote`: a CHVote election's authorities, printing authority and voters' client (spec/92.12);
- `sv`: the split-value servers and their controller (spec/97.13);
- `mix`: a mixnet election's trustees, mixers and voters' client (spec/91.9).
"""
