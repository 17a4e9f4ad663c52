// Runs before start and test, on whatever Node is first on the PATH: plain JavaScript, one line if wrong.
const major = Number(process.versions.node.split('.')[0]);
if (major !== 24) {
  console.error(`wallet: Node 24 is required but this is Node ${process.versions.node}; run through npm (npm start, npm test) after npm ci, which installs Node 24 from the "node" package.`);
  process.exit(1);
}
