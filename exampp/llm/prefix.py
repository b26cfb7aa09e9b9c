"""Which prompts of a call wait for another, so that a server's prefix cache computes a shared passage once.

A server with a prefix cache (vLLM's automatic prefix caching, SGLang's radix cache, OpenAI's prompt
caching) computes the leading blocks of a prompt once and reuses them for every later prompt that starts
the same way, but only once a request holding them has been prefilled: prompts sent together each
compute them. Where a prompt puts the passage before the question (``self-rating(prompt=passage-first)``),
the prompts of one passage share a long prefix; sending the first of them alone and the others once it
has been answered has the server compute the passage once. The requests are the same, only sent later.

What all prompts of a call share (the instruction) is left out: waiting on one request for it would
hold the whole call back for what the server caches after its first answers anyway. So with the
question before the passage (the papers' prompts), no prompt waits.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

# Characters that prompts must share beyond what the whole call shares to wait for one another: about
# 32 tokens at about 4 characters a token, two of the 16-token blocks that vLLM and SGLang cache in. A
# shared part shorter than a block saves nothing; from two, at least one whole block is saved wherever
# the blocks' bounds fall, and a passage (an MS MARCO one has about 60 words) is longer still.
PREFIX_MIN = 128


def leaders(texts: Sequence[str]) -> list[int | None]:
    """For each of ``texts`` (the prompts of one call, in order), the index of the earlier prompt whose
    request it should wait for, or None: prompts that share at least :data:`PREFIX_MIN` characters more
    than all of ``texts`` share form a group, and the group's first is its leader."""
    if len(texts) < 2:
        return [None] * len(texts)
    length = len(os.path.commonprefix(list(texts))) + PREFIX_MIN
    first: dict[str, int] = {}
    waits: list[int | None] = []
    for i, text in enumerate(texts):
        leader = first.setdefault(text[:length], i) if len(text) >= length else i
        waits.append(None if leader == i else leader)
    return waits
