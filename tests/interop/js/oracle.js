#!/usr/bin/env node
// Test-only oracle: answers questions about the chain formats with the official Alephium
// TypeScript SDK, so the Python tests have an independent reference. Nothing here ships.
//
// Protocol: one JSON request per line on stdin, one JSON response per line on stdout, in order.
//   request:  {"id": <any>, "op": "<name>", "args": {...}}
//   response: {"id": <same>, "result": {...}}  or  {"id": <same>, "error": "<message>"}
// BigInts are rendered as decimal strings and byte arrays as lowercase hex. The process exits
// when stdin closes. Nothing but responses is ever written to stdout.
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const readline = require('node:readline')
const web3 = require('@alephium/web3')
const { PrivateKeyWallet } = require('@alephium/web3-wallet')

const { codec, utils } = web3
const hex = (bytes) => utils.binToHex(bytes)

function unhex(text, what) {
  if (typeof text !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(text)) {
    throw new Error(`${what ?? 'value'}: expected an even-length hex string`)
  }
  return utils.hexToBinUnsafe(text)
}

// JSON-safe copy: bigint -> decimal string, Uint8Array -> hex, undefined fields dropped.
function plain(value) {
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Uint8Array) return hex(value)
  if (Array.isArray(value)) return value.map(plain)
  if (value !== null && typeof value === 'object') {
    const out = {}
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) out[k] = plain(v)
    }
    return out
  }
  return value
}

// The SDK's Codec.decode ignores bytes left over after the value. To see them, decode through a
// cursor with the same interface as the SDK's internal reader and report what was not consumed.
class Cursor {
  constructor(bytes) {
    this.bytes = bytes
    this.index = 0
  }
  getIndex() {
    return this.index
  }
  getBytes(from, to) {
    if (from > to || from < 0 || to > this.bytes.length) {
      throw new Error(`Index out of range [${from}, ${to}), data length: ${this.bytes.length}`)
    }
    return this.bytes.slice(from, to)
  }
  consumeByte() {
    if (this.index >= this.bytes.length) {
      throw new Error(`Index out of range: no byte at index ${this.index}`)
    }
    return this.bytes[this.index++]
  }
  consumeBytes(num) {
    const to = this.index + num
    if (num < 0 || to > this.bytes.length) {
      throw new Error(`Index out of range: unable to consume bytes from index ${this.index} to ${to}`)
    }
    const out = this.bytes.slice(this.index, to)
    this.index = to
    return out
  }
  consumeAll() {
    return this.consumeBytes(this.bytes.length - this.index)
  }
}

function decodeWithRest(someCodec, bytes) {
  const cursor = new Cursor(bytes)
  const value = someCodec._decode(cursor)
  return { value, trailingBytes: bytes.length - cursor.getIndex() }
}

function installedVersion(name) {
  const file = path.join(__dirname, 'node_modules', name, 'package.json')
  return JSON.parse(fs.readFileSync(file, 'utf8')).version
}

function keyTypeOf(args) {
  return args.keyType ?? 'default'
}

function wallet(args) {
  return new PrivateKeyWallet({ privateKey: args.privateKey, keyType: keyTypeOf(args) })
}

const ops = {
  ping() {
    return {
      node: process.version,
      web3: installedVersion('@alephium/web3'),
      web3Wallet: installedVersion('@alephium/web3-wallet')
    }
  },

  // Decode an unsigned tx; `api` is the SDK's node-API JSON (decodeApiUnsignedTx), `txId` the
  // SDK's txId of the decoded value, `reencoded` the SDK's bytes for the decoded value.
  decodeUnsignedTx({ hex: txHex }) {
    const bytes = unhex(txHex, 'hex')
    const { value, trailingBytes } = decodeWithRest(codec.unsignedTxCodec, bytes)
    const result = {
      txId: codec.UnsignedTxCodec.txId(value),
      reencoded: hex(codec.unsignedTxCodec.encode(value)),
      trailingBytes
    }
    try {
      result.api = plain(codec.unsignedTxCodec.decodeApiUnsignedTx(bytes))
    } catch (e) {
      // Raw decoding worked but the API view refused (e.g. a P2C fixed output); say so.
      result.apiError = String(e && e.message ? e.message : e)
    }
    try {
      const [fromGroup, toGroup] = web3.groupIndexOfTransaction(value)
      Object.assign(result, { fromGroup, toGroup })
    } catch (e) {
      result.groupError = String(e && e.message ? e.message : e)
    }
    return result
  },

  encodeRoundTrip({ hex: txHex }) {
    const bytes = unhex(txHex, 'hex')
    const { value, trailingBytes } = decodeWithRest(codec.unsignedTxCodec, bytes)
    return { hex: hex(codec.unsignedTxCodec.encode(value)), trailingBytes }
  },

  // The other direction: bytes the SDK builds from node-API JSON (encodeApiUnsignedTx).
  encodeApiUnsignedTx({ json }) {
    const value = codec.UnsignedTxCodec.fromApiUnsignedTx(json)
    return { hex: hex(codec.unsignedTxCodec.encode(value)), txId: codec.UnsignedTxCodec.txId(value) }
  },

  // A full (signed) transaction: the SDK's bytes for it after decoding, and its txId.
  decodeTransaction({ hex: txHex }) {
    const bytes = unhex(txHex, 'hex')
    const { value, trailingBytes } = decodeWithRest(codec.transactionCodec, bytes)
    return {
      reencoded: hex(codec.transactionCodec.encode(value)),
      txId: codec.UnsignedTxCodec.txId(value.unsigned),
      inputSignatures: plain(value.inputSignatures),
      trailingBytes
    }
  },

  hashMessage({ message, hasher }) {
    return { hash: web3.hashMessage(message, hasher) }
  },

  async signMessage(args) {
    const w = wallet(args)
    const { signature } = await w.signMessage({
      signerAddress: w.address,
      message: args.message,
      messageHasher: args.hasher
    })
    return { signature, hash: web3.hashMessage(args.message, args.hasher), publicKey: w.publicKey }
  },

  verifyMessage({ message, hasher, publicKey, signature, keyType }) {
    return { valid: web3.verifySignedMessage(message, hasher, publicKey, signature, keyType) }
  },

  signTxId(args) {
    return { signature: web3.transactionSign(args.txId, args.privateKey, keyTypeOf(args)) }
  },

  // The wallet path a dApp takes: sign a serialized unsigned tx (the SDK hashes it itself).
  async signUnsignedTx(args) {
    const w = wallet(args)
    const r = await w.signUnsignedTx({ signerAddress: w.address, unsignedTx: args.hex })
    return { signature: r.signature, txId: r.txId, fromGroup: r.fromGroup, toGroup: r.toGroup }
  },

  verifyTxId({ txId, publicKey, signature, keyType }) {
    return { valid: web3.transactionVerifySignature(txId, publicKey, signature, keyType) }
  },

  address(args) {
    const w = wallet(args)
    return { address: w.address, publicKey: w.publicKey, group: w.group }
  },

  addressFromPublicKey({ publicKey, keyType }) {
    const address = web3.addressFromPublicKey(publicKey, keyType ?? 'default')
    return { address, group: web3.groupOfAddress(address) }
  },

  addressInfo({ address }) {
    if (!web3.isValidAddress(address)) return { valid: false, group: null, bytes: null }
    return {
      valid: true,
      group: web3.groupOfAddress(address),
      bytes: hex(web3.addressToBytes(address))
    }
  },

  // Lockup script bytes -> the SDK's address string for them.
  addressFromLockup({ hex: lockupHex }) {
    const bytes = unhex(lockupHex, 'hex')
    const { value, trailingBytes } = decodeWithRest(codec.lockupScript.lockupScriptCodec, bytes)
    return { address: web3.addressFromLockupScript(value), trailingBytes }
  },

  contractAddress({ contractId }) {
    return { address: web3.addressFromContractId(contractId) }
  },

  decodeScript({ hex: scriptHex }) {
    const bytes = unhex(scriptHex, 'hex')
    const { value, trailingBytes } = decodeWithRest(codec.script.scriptCodec, bytes)
    return {
      hex: hex(codec.script.scriptCodec.encode(value)),
      methods: plain(value.methods),
      trailingBytes
    }
  }
}

async function handle(line) {
  let id = null
  try {
    const request = JSON.parse(line)
    id = request.id ?? null
    const op = ops[request.op]
    if (typeof op !== 'function' || !Object.prototype.hasOwnProperty.call(ops, request.op)) {
      throw new Error(`unknown op: ${request.op}`)
    }
    return { id, result: await op(request.args ?? {}) }
  } catch (e) {
    return { id, error: String(e && e.message ? e.message : e) }
  }
}

async function main() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of rl) {
    if (line.trim() === '') continue
    process.stdout.write(JSON.stringify(await handle(line)) + '\n')
  }
}

main().catch((e) => {
  process.stderr.write(`oracle crashed: ${e && e.stack ? e.stack : e}\n`)
  process.exit(1)
})
