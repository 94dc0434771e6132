"""lore: one memory shared by every AI coding agent.

Nothing heavy is imported here: the session-start hook imports this package.
"""

__version__ = "0.1.0"
