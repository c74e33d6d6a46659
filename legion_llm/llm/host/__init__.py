"""The `host` engine: the agent that called us proposes; we prepare, verify and write.

Every LLM step is prepare -> propose -> verify -> write around one `engine.ask`. The host engine
splits it at that seam: `prepare` runs the step with RecordingEngine (the offline step answers,
nothing is written, each question a model would have been asked is kept) and returns those
questions with a ticket; `submit` runs the same step again with ReplayEngine, which answers each
question with the agent's proposal, so the proposal goes through exactly the verification,
repair and write of every other engine. The ticket (ticket.py) binds the proposal to the inputs.
"""
