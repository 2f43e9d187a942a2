"""Matching a request to a pair: the matchers, Hoverfly's scoring, the candidate index and the match
cache.
"""
