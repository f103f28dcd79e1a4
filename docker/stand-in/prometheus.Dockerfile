# Stand-in for prom/prometheus: Debian's prometheus (the server and promtool only).
FROM store-orders-stand-in/debian:bookworm
RUN apt-get update && apt-get install -y --no-install-recommends prometheus \
  && rm -rf /var/lib/apt/lists/* && mkdir -p /prometheus && chown prometheus /prometheus
USER prometheus
WORKDIR /prometheus
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
