"""HTTP on the wire: the request as the engine sees it (parsed once from HTTP/1.1) and the response bytes
it sends.
"""
