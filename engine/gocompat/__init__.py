"""Go's behaviour where Hoverfly's answers depend on it: encoding/json, RE2 regular expressions,
Kubernetes JSONPath, XPath results, the tdewolff XML minifier and the syntax errors of otto, the
JavaScript engine Hoverfly runs PAC files in (``ottosyntax``). Depends on nothing else in the engine
but its errors.
"""
