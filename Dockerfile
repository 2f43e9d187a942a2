# simproxy in a container: `docker build -t simproxy .`, then
#   docker run -p 8500:8500 -p 8888:8888 simproxy
#   docker run -v "$PWD/sims:/simulations:ro" simproxy -import /simulations/service.json
# The generated CA is kept in /var/lib/simproxy (a volume: mount one to keep it across runs), or
# mount your own and pass -cert/-key. Arguments after the image name are simproxy's flags; the
# defaults below listen on every interface, as a container must.

FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY admin ./admin
COPY store ./store
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.12-slim
RUN useradd --system --uid 10001 --home-dir /var/lib/simproxy --create-home simproxy
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-compile /wheels/*.whl && rm -rf /wheels
ENV SIMPROXY_HOME=/var/lib/simproxy \
    AdminPort=8888 \
    ProxyPort=8500 \
    PYTHONUNBUFFERED=1
USER 10001
WORKDIR /var/lib/simproxy
VOLUME ["/var/lib/simproxy"]
EXPOSE 8500 8888
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:' + os.environ['AdminPort'] + '/api/health', timeout=2).status != 200)"]
ENTRYPOINT ["simproxy"]
CMD ["-listen-on-host", "0.0.0.0"]
