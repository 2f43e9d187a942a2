"""The proxy port: simproxy's own HTTP/1.1 server, CONNECT tunnels and the certificates it intercepts with."""
