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
