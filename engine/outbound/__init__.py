"""Everything simproxy calls out to: the real services (one HTTP client), PAC scripts, middleware and
post-serve actions.
"""
