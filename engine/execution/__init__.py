"""Where work runs besides the event loop: tracked background tasks, CPU work offloaded to threads
or processes, local programs (middleware, post-serve actions) and child processes tied to their parent.
"""
