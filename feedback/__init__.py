"""Reader feedback: a small service that stores suggestions readers make on the book.

Modules, in the order a request meets them:
``cors`` → ``ratelimit`` → ``validation`` → ``storage`` (SQLite or PostgreSQL),
wired together in ``app``; ``review`` renders the maintainer page, ``export``
writes JSON/CSV, ``cli`` is ``python -m feedback``.
"""
