"""The `selftest` prompt's schema and offline step: the smallest real use of the seam."""

from __future__ import annotations

from pydantic import BaseModel, Field

from legion_llm.llm.offline import OfflineCall, offline_step

PROMPT = "selftest"


class SelfTestReply(BaseModel):
    """The word repeated back, and how many characters it has."""

    echo: str = Field(description="The word, exactly as given.")
    length: int = Field(ge=0, description="Number of characters in the word.")


@offline_step(PROMPT)
def selftest_offline(call: OfflineCall) -> SelfTestReply:
    word = str(call.variables["word"])
    return SelfTestReply(echo=word, length=len(word))


def verify(word: str, reply: SelfTestReply) -> bool:
    """The deterministic check of whatever engine answered."""
    return reply.echo == word and reply.length == len(word)
