"""Response templating compatible with Hoverfly 1.12.10 (its fork of the raymond Handlebars engine)."""
