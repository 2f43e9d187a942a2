"""What was served and logged: journal entries, their packed form, search and indexes, log records, and
the recorder that buffers both for the store.
"""
