#!/usr/bin/env node
// Test-only client: drives a running predmarket devnet with the official Alephium SDK
// (NodeProvider + PrivateKeyWallet), so the Python tests can check that the SDK cannot tell
// the devnet from a full node. Nothing here ships.
//
// Protocol (same framing as oracle.js): one JSON request per line on stdin, one JSON response
// per line on stdout, in order.
//   request:  {"id": <any>, "op": "<name>", "args": {...}}
//   response: {"id": <same>, "result": {...}, "requests": [...]}
//          or {"id": <same>, "error": "<message>", "requests": [...]}
// `requests` lists every HTTP call the SDK made for that op ("METHOD /path -> status"), so the
// tests can see which node endpoints the SDK depends on. BigInts are rendered as decimal
// strings. The process exits when stdin closes.
'use strict'

const readline = require('node:readline')
const web3 = require('@alephium/web3')
const { PrivateKeyWallet } = require('@alephium/web3-wallet')

let seen = []

// A fetch that records each call the SDK makes (method, path without the query, status).
async function recordingFetch(input, init) {
  const url = new URL(typeof input === 'string' ? input : input.url)
  const method = (init && init.method) || 'GET'
  const response = await fetch(input, init)
  seen.push(`${method} ${url.pathname} -> ${response.status}`)
  return response
}

function plain(value) {
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Uint8Array) return web3.utils.binToHex(value)
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

function connect(url) {
  if (typeof url !== 'string') throw new Error('url: expected the devnet base URL')
  // The SDK's global provider (`web3.setCurrentNodeProvider`), which PrivateKeyWallet uses.
  web3.web3.setCurrentNodeProvider(url, undefined, recordingFetch)
  return web3.web3.getCurrentNodeProvider()
}

function wallet(args) {
  // No nodeProvider passed: the wallet uses the one set by setCurrentNodeProvider.
  return new PrivateKeyWallet({ privateKey: args.privateKey, keyType: args.keyType ?? 'default' })
}

function tokens(list) {
  return (list ?? []).map((t) => ({ id: t.id, amount: BigInt(t.amount) }))
}

const ops = {
  account: (args) => {
    const w = wallet(args)
    return { address: w.address, publicKey: w.publicKey, group: w.group, keyType: w.keyType }
  },

  // Info calls a dApp makes first.
  infos: async (args) => {
    const np = connect(args.url)
    return {
      chainParams: await np.infos.getInfosChainParams(),
      selfClique: await np.infos.getInfosSelfClique(),
      version: await np.infos.getInfosVersion(),
      node: await np.infos.getInfosNode()
    }
  },

  balance: async (args) => {
    const np = connect(args.url)
    return np.addresses.getAddressesAddressBalance(args.address)
  },

  transfer: async (args) => {
    connect(args.url)
    const w = wallet(args)
    return w.signAndSubmitTransferTx({
      signerAddress: w.address,
      signerKeyType: w.keyType,
      destinations: [
        { address: args.to, attoAlphAmount: BigInt(args.attoAlphAmount), tokens: tokens(args.tokens) }
      ]
    })
  },

  // The dApp path: the SDK builds the tx with execute-script, signs it and submits it.
  executeScript: async (args) => {
    connect(args.url)
    const w = wallet(args)
    return w.signAndSubmitExecuteScriptTx({
      signerAddress: w.address,
      signerKeyType: w.keyType,
      bytecode: args.bytecode,
      attoAlphAmount: args.attoAlphAmount === undefined ? undefined : BigInt(args.attoAlphAmount),
      tokens: tokens(args.tokens)
    })
  },

  // The service path: someone else asked execute-script for the unsigned tx; the wallet signs
  // and submits exactly those bytes.
  buildScript: async (args) => {
    const np = connect(args.url)
    const w = wallet(args)
    const body = {
      fromPublicKey: w.publicKey,
      fromPublicKeyType: w.keyType,
      bytecode: args.bytecode,
      attoAlphAmount: args.attoAlphAmount,
      tokens: args.tokens
    }
    if (w.keyType !== 'default') body.group = w.group
    return np.contracts.postContractsUnsignedTxExecuteScript(body)
  },

  signAndSubmitUnsigned: async (args) => {
    connect(args.url)
    const w = wallet(args)
    return w.signAndSubmitUnsignedTx({ signerAddress: w.address, unsignedTx: args.unsignedTx })
  },

  txStatus: async (args) => {
    const np = connect(args.url)
    return np.transactions.getTransactionsStatus({ txId: args.txId })
  },

  waitConfirmed: async (args) => {
    const np = connect(args.url)
    for (let i = 0; i < 200; i++) {
      const status = await np.transactions.getTransactionsStatus({ txId: args.txId })
      if (status.type === 'Confirmed') return status
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`tx ${args.txId} not confirmed`)
  },

  events: async (args) => {
    const np = connect(args.url)
    return np.events.getEventsContractContractaddress(args.contractAddress, {
      start: args.start ?? 0,
      limit: args.limit
    })
  },

  eventCount: async (args) => {
    const np = connect(args.url)
    return { count: await np.events.getEventsContractContractaddressCurrentCount(args.contractAddress) }
  },

  contractState: async (args) => {
    const np = connect(args.url)
    return np.contracts.getContractsAddressState(args.address)
  }
}

async function handle(line) {
  let request
  try {
    request = JSON.parse(line)
  } catch (e) {
    return { id: null, error: `bad request line: ${e.message}`, requests: [] }
  }
  const { id, op, args } = request
  seen = []
  try {
    const fn = ops[op]
    if (fn === undefined) throw new Error(`unknown op ${op}`)
    const result = await fn(args ?? {})
    return { id, result: plain(result), requests: seen }
  } catch (e) {
    return { id, error: e instanceof Error ? e.message : String(e), requests: seen }
  }
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    process.stdout.write(JSON.stringify(await handle(line)) + '\n')
  }
}

main().catch((e) => {
  process.stderr.write(`${e.stack ?? e}\n`)
  process.exit(1)
})
