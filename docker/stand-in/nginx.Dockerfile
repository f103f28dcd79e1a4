# Stand-in for nginx:1.29-bookworm: Debian's nginx, in the foreground as the official image runs it.
FROM store-orders-stand-in/debian:bookworm
RUN apt-get update && apt-get install -y --no-install-recommends nginx-light \
  && rm -rf /var/lib/apt/lists/* && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
