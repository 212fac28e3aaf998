/**
 * How web_fetch names a failed lookup, connection or read in its own words. Node's error messages
 * carry what the peer chose: a TLS certificate that does not match the host lists its altnames
 * ("…is not in the cert's altnames: DNS:<anything>"), a TLS alert or a malformed response quotes
 * what the server sent. Such text would reach the model outside the untrusted-content fence
 * (untrusted-page.ts), so a failure is named by its error code alone: fixed wording for the codes
 * we know, else the bare code, and only when it has the form of one — never the error's message.
 */

/** Our words for the error codes a fetch meets; the code itself follows in brackets. */
const FAILURES: Readonly<Record<string, string>> = {
  ENOTFOUND: "no such host name",
  EAI_AGAIN: "the name lookup failed for now (temporary DNS failure)",
  ENODATA: "the name has no addresses",
  ECONNREFUSED: "the connection was refused",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  EPIPE: "the connection was closed while the request was sent",
  ERR_STREAM_PREMATURE_CLOSE: "the connection closed before the response was complete",
  ERR_TLS_CERT_ALTNAME_INVALID: "the server's TLS certificate is not valid for this host name",
  CERT_HAS_EXPIRED: "the server's TLS certificate has expired",
  CERT_NOT_YET_VALID: "the server's TLS certificate is not valid yet",
  CERT_REVOKED: "the server's TLS certificate was revoked",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the server's TLS certificate is self-signed, so not trusted",
  SELF_SIGNED_CERT_IN_CHAIN:
    "the server's TLS certificate chain ends in a self-signed certificate, so is not trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the server's TLS certificate could not be verified",
  UNABLE_TO_GET_ISSUER_CERT: "the server's TLS certificate could not be verified (issuer unknown)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the server's TLS certificate could not be verified (issuer unknown)",
  EPROTO: "the TLS handshake failed",
  Z_DATA_ERROR: "the response body could not be decompressed",
  Z_BUF_ERROR: "the response body was cut short",
  ERR_BROTLI_DECOMPRESSION_FAILED: "the response body could not be decompressed",
};

/** What an error code looks like (ECONNREFUSED, ERR_TLS_CERT_ALTNAME_INVALID, HPE_INVALID_CONSTANT …). */
const CODE = /^[A-Z0-9_]{1,64}$/;

/**
 * A network failure in our words: "the connection was refused (ECONNREFUSED)" for a code we know,
 * "the connection failed (HPE_INVALID_CONSTANT)" for another well-formed code, and "the
 * connection failed" when the error has none. The error's message is never used.
 */
export function networkFailure(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !CODE.test(code)) return "the connection failed";
  return `${FAILURES[code] ?? "the connection failed"} (${code})`;
}
