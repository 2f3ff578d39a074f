# weftgate: a static gateway binary in a distroless image, run as non-root.
#
#   docker build --build-arg VERSION=$(git describe --always) -t weftgate .
#   export WEFTGATE_GRPC_TOKEN="$(openssl rand -hex 32)"   # backends present it too
#   docker run -e WEFTGATE_GRPC_TOKEN \
#     -p 8080:8080 -p 127.0.0.1:9090:9090 -p 127.0.0.1:9100:9100 \
#     -v weftgate-data:/data weftgate
#
# gRPC off loopback needs WEFTGATE_GRPC_TOKEN (or mutual TLS): without one the
# gateway refuses to start, since anyone reaching 9090 would be a backend.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/gateway ./cmd/gateway
# The data directory, owned by the image's non-root user (65532).
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /gateway
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# Inside a container the listeners face the container's network, not
# loopback. The operator endpoints (/status and /metrics list every
# document) get their own port, allowed off loopback on purpose because a
# container has no other way to reach them: publish 9100 only to the
# scraper. Every other setting keeps its default and can be set with
# further WEFTGATE_* variables.
ENV WEFTGATE_WS_ADDR=0.0.0.0:8080 \
    WEFTGATE_GRPC_ADDR=0.0.0.0:9090 \
    WEFTGATE_ADMIN_ADDR=0.0.0.0:9100 \
    WEFTGATE_INSECURE_ADMIN=true \
    WEFTGATE_DATA_DIR=/data
VOLUME /data
EXPOSE 8080 9090 9100
STOPSIGNAL SIGTERM
ENTRYPOINT ["/gateway"]
