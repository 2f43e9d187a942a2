"""OpenAPI 3.0 / 3.1 and Swagger 2.0 documents turned into simulations.

document.py reads a document (YAML or JSON) and inlines its ``$ref``s, also across files beside it;
generate.py makes an answer from a schema; convert.py makes the v5 simulation: one pair per
operation for its default answer, and pairs selected by a ``Prefer`` header for every other
declared status and named example; validate.py reads the request and response rules convert.py
leaves in the default pairs' labels and lists what a request or a real answer breaks.
"""
