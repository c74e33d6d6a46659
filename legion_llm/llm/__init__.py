"""The LLM layer: the only code that imports anthropic, tiktoken and tenacity (lazily).

Import what you need from the submodules; nothing is imported here so that `import
legion_llm.llm` stays free:

    from legion_llm.llm.factory import select_engine
    from legion_llm.llm.engine import Answer, Engine
    from legion_llm.llm.offline import offline_step, OfflineCall
    from legion_llm.llm.testing import FakeEngine
"""
