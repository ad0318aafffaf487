/**
 * A few helpers over `onnx-proto` to write small ONNX graphs by hand.
 * Everything here is deterministic: the same arguments always encode to the same bytes.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
type ITensorProto = onnxProto.onnx.ITensorProto;
type INodeProto = onnxProto.onnx.INodeProto;
type IValueInfoProto = onnxProto.onnx.IValueInfoProto;
type IAttributeProto = onnxProto.onnx.IAttributeProto;

export const DataType = onnx.TensorProto.DataType;
export type DataType = onnxProto.onnx.TensorProto.DataType;

/** A fixed size, or a symbolic name for a dynamic axis (e.g. 'batch'). */
export type Dim = number | string;

/** ONNX stores raw tensor data little-endian, which is also what typed arrays hold on every platform we run on. */
function rawBytes(data: ArrayBufferView): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

export function tensor(name: string, dataType: DataType, dims: number[], data: ArrayBufferView): ITensorProto {
  return { name, dataType, dims, rawData: rawBytes(data) };
}

export function floatTensor(name: string, dims: number[], data: Float32Array): ITensorProto {
  return tensor(name, DataType.FLOAT, dims, data);
}

/**
 * IEEE 754 binary16 bits of a number, rounded to nearest, ties to even (what numpy's `astype(float16)` does): values
 * that round past the largest half (65504) become ±Infinity, those at most half the smallest subnormal (2⁻²⁴) ±0.
 */
export function toFloat16Bits(value: number): number {
  const f32 = new Float32Array([value]);
  const bits = new Uint32Array(f32.buffer)[0] as number;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  // Unbiased exponent e: a half holds 2^-14 ≤ |x| < 2^16 normally, down to 2^-24 as a subnormal.
  const e = exponent - 127;
  if (e > 15) return sign | 0x7c00;
  if (e >= -14) {
    // Normal half: keep 10 of 23 mantissa bits, round the 13 dropped ones to nearest even (a carry may bump the exponent).
    let half = ((e + 15) << 10) | (mantissa >>> 13);
    const rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++;
    return sign | half;
  }
  if (e < -25) return sign;
  // Subnormal half: the value in units of 2^-24, from the full 24-bit significand, rounded to nearest even.
  const significand = mantissa | 0x800000;
  // |x| = significand·2^(e-23) = (significand >> shift) units of 2^-24, shift = -1 - e (between 10 and 24).
  const shift = -1 - e;
  let half = significand >>> shift;
  const rest = significand & ((1 << shift) - 1);
  const midpoint = 1 << (shift - 1);
  if (rest > midpoint || (rest === midpoint && (half & 1) === 1)) half++;
  return sign | half;
}

/** The number a binary16 bit pattern holds. */
export function fromFloat16Bits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** A FLOAT16 tensor of the values rounded to half precision (ONNX stores its raw data as the 16-bit patterns). */
export function float16Tensor(name: string, dims: number[], data: ArrayLike<number>): ITensorProto {
  return tensor(name, DataType.FLOAT16, dims, Uint16Array.from(data, toFloat16Bits));
}

export function int64Tensor(name: string, dims: number[], values: readonly number[]): ITensorProto {
  return tensor(name, DataType.INT64, dims, BigInt64Array.from(values, (v) => BigInt(v)));
}

export function valueInfo(name: string, elemType: DataType, shape: Dim[]): IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

export type Attribute = { int: number } | { ints: number[] } | { float: number } | { string: string };

function attribute(name: string, value: Attribute): IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if ('int' in value) return { name, type: T.INT, i: value.int };
  if ('ints' in value) return { name, type: T.INTS, ints: value.ints };
  if ('float' in value) return { name, type: T.FLOAT, f: value.float };
  return { name, type: T.STRING, s: new TextEncoder().encode(value.string) };
}

export function node(opType: string, inputs: string[], outputs: string[], attributes: Record<string, Attribute> = {}): INodeProto {
  return {
    opType,
    input: inputs,
    output: outputs,
    name: `${opType}_${outputs[0]}`,
    attribute: Object.entries(attributes).map(([name, value]) => attribute(name, value)),
  };
}

export interface GraphSpec {
  name: string;
  inputs: IValueInfoProto[];
  outputs: IValueInfoProto[];
  nodes: INodeProto[];
  initializers: ITensorProto[];
  /** Default-domain opset. 14 covers every op we use (Unsqueeze/ReduceMean with axes as they are in 13+). */
  opset?: number;
  docString?: string;
  metadata?: Record<string, string>;
}

/** IR version 8 pairs with opsets up to 17 and is read by every ONNX Runtime we ship with. */
const IR_VERSION = 8;

export function encodeModel(spec: GraphSpec): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: IR_VERSION,
    producerName: 'engram',
    producerVersion: '1',
    opsetImport: [{ domain: '', version: spec.opset ?? 14 }],
    docString: spec.docString ?? '',
    metadataProps: Object.entries(spec.metadata ?? {}).map(([key, value]) => ({ key, value })),
    graph: {
      name: spec.name,
      input: spec.inputs,
      output: spec.outputs,
      node: spec.nodes,
      initializer: spec.initializers,
    },
  });
  return onnx.ModelProto.encode(model).finish();
}
