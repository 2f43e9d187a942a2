"""Go's behaviour where Hoverfly's answers depend on it: encoding/json, RE2 regular expressions,
Kubernetes JSONPath, XPath results and the tdewolff XML minifier. Depends on nothing else in the engine
but its errors.
"""
