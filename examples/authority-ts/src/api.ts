// The gateway's API, loaded from proto/ at run time, with the types
// proto-loader-gen-types wrote from the same files (src/gen, made by
// `npm run gen`).
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './gen/gateway';
import type { GatewayServiceClient } from './gen/weftgate/v1/GatewayService';

// Keep these equal to the flags of the `gen` script, or the types lie:
// snake_case names as in the .proto, uint64 as decimal strings (a JS number
// loses cursors past 2^53), enums and bytes (base64) as strings, so every
// message is plain JSON, and `oneofs` names the field set in each oneof.
export const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  bytes: String,
  defaults: true,
  oneofs: true,
};

// Bytes of one gRPC message either way: the gateway's default
// Limits.max_message_bytes. grpc-js receives at most 4 MiB unless told.
export const maxMessageBytes = 16 << 20;

export function protoDir(): string {
  return process.env.WEFTGATE_PROTO_DIR || path.resolve(__dirname, '..', '..', '..', 'proto');
}

export function dial(address: string): GatewayServiceClient {
  const def = protoLoader.loadSync('weftgate/v1/gateway.proto', { ...loaderOptions, includeDirs: [protoDir()] });
  const pkg = grpc.loadPackageDefinition(def) as unknown as ProtoGrpcType;
  return new pkg.weftgate.v1.GatewayService(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': maxMessageBytes,
    'grpc.max_send_message_length': maxMessageBytes,
  });
}

// metadata carries the bearer token. grpc-js refuses call credentials on a
// plaintext channel, so it goes on each call as a header.
export function metadata(token: string): grpc.Metadata {
  const md = new grpc.Metadata();
  if (token) md.set('authorization', `Bearer ${token}`);
  return md;
}
