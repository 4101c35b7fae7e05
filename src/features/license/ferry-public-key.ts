/**
 * Ferry's built-in licence verification key (Ed25519, SPKI PEM).
 *
 * Only the public half lives in the repository. The matching private key was generated once and
 * deliberately discarded, so no one (including the maintainers) can mint licences that this key
 * accepts; operators who issue their own licences set `LICENSE_PUBLIC_KEY` to their own key
 * (see `npm run license -- keygen`). Replacing this constant is how a distributor would ship a
 * different trust root.
 */
export const FERRY_LICENSE_PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAfdz2IoMPgBJaIYzMbcqcMOd61rU/ZeTGdcCkUbNZn28=
-----END PUBLIC KEY-----
`;
