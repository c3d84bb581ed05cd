/**
 * A lossless H.264 Constrained Baseline encoder that needs no entropy coding of residuals: every coded
 * macroblock is I_PCM (raw samples). The first picture is an IDR with every macroblock coded; later
 * pictures are P slices in which unchanged macroblocks are skipped (P_Skip copies the co-located block
 * of the previous picture, since every motion vector in the stream is zero) and changed ones are I_PCM.
 * Deblocking is off, so decoding reproduces the input exactly.
 */
import { BitWriter } from './bit-writer';

/** A picture in 4:2:0: Y is width x height, Cb and Cr are (width/2) x (height/2). Dimensions are multiples of 16. */
export interface YuvFrame {
  y: Uint8Array;
  cb: Uint8Array;
  cr: Uint8Array;
}

export interface H264StreamInfo {
  /** Displayed size (even numbers); the coded size is rounded up to whole macroblocks and cropped. */
  width: number;
  height: number;
  fps: number;
}

export interface H264Encoded {
  sps: Buffer;
  pps: Buffer;
  /** One access unit per frame: its NAL units, without start codes. */
  frames: Array<{ nalUnits: Buffer[]; keyframe: boolean }>;
  profileIdc: number;
  levelIdc: number;
}

const NAL_SLICE = 1;
const NAL_IDR = 5;
const NAL_SPS = 7;
const NAL_PPS = 8;
const MB_TYPE_I_PCM_IN_I_SLICE = 25;
const MB_TYPE_I_PCM_IN_P_SLICE = 5 + 25;
const LOG2_MAX_FRAME_NUM = 4;

export function codedSize(width: number, height: number): { width: number; height: number } {
  return { width: Math.ceil(width / 16) * 16, height: Math.ceil(height / 16) * 16 };
}

export function encodeH264(info: H264StreamInfo, frames: YuvFrame[]): H264Encoded {
  if (info.width % 2 !== 0 || info.height % 2 !== 0) throw new RangeError('H.264 4:2:0 needs even dimensions');
  const coded = codedSize(info.width, info.height);
  const mbWidth = coded.width / 16;
  const mbHeight = coded.height / 16;
  const levelIdc = chooseLevel(mbWidth * mbHeight);
  const sps = nal(3, NAL_SPS, sequenceParameterSet(info, mbWidth, mbHeight, levelIdc));
  const pps = nal(3, NAL_PPS, pictureParameterSet());
  const out: H264Encoded['frames'] = [];
  let previous: YuvFrame | null = null;
  frames.forEach((frame, index) => {
    if (!previous) {
      out.push({ nalUnits: [nal(3, NAL_IDR, slice(frame, null, mbWidth, mbHeight, 0))], keyframe: true });
    } else {
      const frameNum = index % (1 << LOG2_MAX_FRAME_NUM);
      out.push({ nalUnits: [nal(2, NAL_SLICE, slice(frame, previous, mbWidth, mbHeight, frameNum))], keyframe: false });
    }
    previous = frame;
  });
  return { sps, pps, frames: out, profileIdc: 66, levelIdc };
}

/** Smallest level whose maximum frame size (in macroblocks) fits the picture. */
function chooseLevel(macroblocks: number): number {
  const levels: Array<[number, number]> = [[99, 10], [396, 20], [792, 21], [1620, 30], [3600, 31], [5120, 32], [8192, 40], [22080, 50], [36864, 51]];
  for (const [maxFrameSize, level] of levels) if (macroblocks <= maxFrameSize) return level;
  return 52;
}

function sequenceParameterSet(info: H264StreamInfo, mbWidth: number, mbHeight: number, levelIdc: number): Buffer {
  const w = new BitWriter(64);
  w.writeBits(66, 8); // profile_idc: Baseline
  w.writeBits(0b110000, 6); // constraint_set0 and set1: Constrained Baseline
  w.writeBits(0, 2);
  w.writeBits(levelIdc, 8);
  w.writeUe(0); // seq_parameter_set_id
  w.writeUe(LOG2_MAX_FRAME_NUM - 4);
  w.writeUe(2); // pic_order_cnt_type 2: output order is decode order
  w.writeUe(1); // max_num_ref_frames
  w.writeBit(0); // gaps_in_frame_num_value_allowed_flag
  w.writeUe(mbWidth - 1);
  w.writeUe(mbHeight - 1);
  w.writeBit(1); // frame_mbs_only_flag
  w.writeBit(1); // direct_8x8_inference_flag
  const cropRight = (mbWidth * 16 - info.width) / 2;
  const cropBottom = (mbHeight * 16 - info.height) / 2;
  const cropping = cropRight > 0 || cropBottom > 0;
  w.writeBit(cropping ? 1 : 0);
  if (cropping) {
    w.writeUe(0);
    w.writeUe(cropRight);
    w.writeUe(0);
    w.writeUe(cropBottom);
  }
  w.writeBit(1); // vui_parameters_present_flag
  w.writeBit(0); // aspect_ratio_info_present_flag
  w.writeBit(0); // overscan_info_present_flag
  w.writeBit(0); // video_signal_type_present_flag
  w.writeBit(0); // chroma_loc_info_present_flag
  w.writeBit(1); // timing_info_present_flag
  w.writeBits(1, 32); // num_units_in_tick
  w.writeBits(info.fps * 2, 32); // time_scale (two ticks per frame)
  w.writeBit(1); // fixed_frame_rate_flag
  w.writeBit(0); // nal_hrd_parameters_present_flag
  w.writeBit(0); // vcl_hrd_parameters_present_flag
  w.writeBit(0); // pic_struct_present_flag
  w.writeBit(1); // bitstream_restriction_flag
  w.writeBit(1); // motion_vectors_over_pic_boundaries_flag
  w.writeUe(0); // max_bytes_per_pic_denom
  w.writeUe(0); // max_bits_per_mb_denom
  w.writeUe(16); // log2_max_mv_length_horizontal
  w.writeUe(16); // log2_max_mv_length_vertical
  w.writeUe(0); // max_num_reorder_frames: no frame is ever held back
  w.writeUe(1); // max_dec_frame_buffering
  w.writeTrailingBits();
  return w.bytes();
}

function pictureParameterSet(): Buffer {
  const w = new BitWriter(16);
  w.writeUe(0); // pic_parameter_set_id
  w.writeUe(0); // seq_parameter_set_id
  w.writeBit(0); // entropy_coding_mode_flag: CAVLC
  w.writeBit(0); // bottom_field_pic_order_in_frame_present_flag
  w.writeUe(0); // num_slice_groups_minus1
  w.writeUe(0); // num_ref_idx_l0_default_active_minus1
  w.writeUe(0); // num_ref_idx_l1_default_active_minus1
  w.writeBit(0); // weighted_pred_flag
  w.writeBits(0, 2); // weighted_bipred_idc
  w.writeSe(0); // pic_init_qp_minus26
  w.writeSe(0); // pic_init_qs_minus26
  w.writeSe(0); // chroma_qp_index_offset
  w.writeBit(1); // deblocking_filter_control_present_flag
  w.writeBit(0); // constrained_intra_pred_flag
  w.writeBit(0); // redundant_pic_cnt_present_flag
  w.writeTrailingBits();
  return w.bytes();
}

function slice(frame: YuvFrame, reference: YuvFrame | null, mbWidth: number, mbHeight: number, frameNum: number): Buffer {
  const isIdr = reference === null;
  const w = new BitWriter(isIdr ? mbWidth * mbHeight * 390 + 64 : 4096);
  w.writeUe(0); // first_mb_in_slice
  w.writeUe(isIdr ? 7 : 5); // slice_type: I or P (all slices of the picture alike)
  w.writeUe(0); // pic_parameter_set_id
  w.writeBits(frameNum, LOG2_MAX_FRAME_NUM);
  if (isIdr) w.writeUe(0); // idr_pic_id
  if (!isIdr) {
    w.writeBit(0); // num_ref_idx_active_override_flag
    w.writeBit(0); // ref_pic_list_modification_flag_l0
  }
  if (isIdr) {
    w.writeBit(0); // no_output_of_prior_pics_flag
    w.writeBit(0); // long_term_reference_flag
  } else {
    w.writeBit(0); // adaptive_ref_pic_marking_mode_flag: sliding window
  }
  w.writeSe(0); // slice_qp_delta
  w.writeUe(1); // disable_deblocking_filter_idc: off
  const lumaWidth = mbWidth * 16;
  const chromaWidth = mbWidth * 8;
  let skipRun = 0;
  for (let mbY = 0; mbY < mbHeight; mbY++) {
    for (let mbX = 0; mbX < mbWidth; mbX++) {
      if (reference && sameMacroblock(frame, reference, mbX, mbY, lumaWidth, chromaWidth)) {
        skipRun++;
        continue;
      }
      if (!isIdr) {
        w.writeUe(skipRun);
        skipRun = 0;
      }
      w.writeUe(isIdr ? MB_TYPE_I_PCM_IN_I_SLICE : MB_TYPE_I_PCM_IN_P_SLICE);
      w.alignWithZeros(); // pcm_alignment_zero_bit
      w.writeBytes(macroblockSamples(frame, mbX, mbY, lumaWidth, chromaWidth));
    }
  }
  if (skipRun > 0) w.writeUe(skipRun);
  w.writeTrailingBits();
  return w.bytes();
}

function macroblockSamples(frame: YuvFrame, mbX: number, mbY: number, lumaWidth: number, chromaWidth: number): Uint8Array {
  const out = new Uint8Array(384);
  let o = 0;
  for (let row = 0; row < 16; row++) {
    const start = (mbY * 16 + row) * lumaWidth + mbX * 16;
    out.set(frame.y.subarray(start, start + 16), o);
    o += 16;
  }
  for (const plane of [frame.cb, frame.cr]) {
    for (let row = 0; row < 8; row++) {
      const start = (mbY * 8 + row) * chromaWidth + mbX * 8;
      out.set(plane.subarray(start, start + 8), o);
      o += 8;
    }
  }
  return out;
}

function sameMacroblock(a: YuvFrame, b: YuvFrame, mbX: number, mbY: number, lumaWidth: number, chromaWidth: number): boolean {
  for (let row = 0; row < 16; row++) {
    const start = (mbY * 16 + row) * lumaWidth + mbX * 16;
    for (let i = start; i < start + 16; i++) if (a.y[i] !== b.y[i]) return false;
  }
  for (let row = 0; row < 8; row++) {
    const start = (mbY * 8 + row) * chromaWidth + mbX * 8;
    for (let i = start; i < start + 8; i++) if (a.cb[i] !== b.cb[i] || a.cr[i] !== b.cr[i]) return false;
  }
  return true;
}

/** NAL unit header plus emulation prevention (no 0x000000..0x000003 may appear in the payload). */
function nal(refIdc: number, type: number, rbsp: Buffer): Buffer {
  const out = Buffer.alloc(1 + rbsp.length + Math.ceil(rbsp.length / 2) + 1);
  out[0] = (refIdc << 5) | type;
  let o = 1;
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out[o++] = 3;
      zeros = 0;
    }
    out[o++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, o);
}
