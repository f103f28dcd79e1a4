# Stand-in for redis:8-bookworm: Debian's redis-server.
FROM store-orders-stand-in/debian:bookworm
RUN apt-get update && apt-get install -y --no-install-recommends redis-server \
  && rm -rf /var/lib/apt/lists/*
USER redis
CMD ["redis-server"]
