"""`mem serve`: a local web view over the `Memory` facade (search, timeline, entities, review queue,
journal, status), loopback only and token-protected.

    server.py   binding 127.0.0.1, the token, the printed address, uvicorn
    app.py      the Starlette routes and the guard middleware
    guard.py    who may talk to the server (Host, Origin, token), decided per request (pure)
    views.py    what the pages show: heat map, graph layout, rendered files, editor links (pure)
    templates/  Jinja2 pages; static/ the vendored htmx and uPlot (see static/LICENSES.md)
"""
