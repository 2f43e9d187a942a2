"""The dashboard: a static page on the admin port that drives the API (its files beside this one)."""
