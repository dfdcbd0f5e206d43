/** A file Vite copies into dist/assets under a hashed name: the import is its URL on svc (`?url`). */
declare module '*?url' {
  const url: string;
  // eslint-disable-next-line no-restricted-syntax -- Vite gives a `?url` import as its default export only
  export default url;
}
