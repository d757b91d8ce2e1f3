//! Disassembly of one function: popcount instructions, SWAR constants and direct callees.

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind};

use super::elf::{Binary, Function};

/// The software-popcount (SWAR) masks, as 64-bit patterns; their 32-bit halves count too.
pub const SWAR_CONSTANTS: [u64; 4] = [
    0x5555_5555_5555_5555,
    0x3333_3333_3333_3333,
    0x0f0f_0f0f_0f0f_0f0f,
    0x0101_0101_0101_0101,
];

/// What one function contains.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionScan {
    /// Scalar `popcnt` instructions.
    pub popcnt: u32,
    /// AVX-512 `vpopcnt{b,w,d,q}` instructions.
    pub vpopcnt: u32,
    /// Which of [`SWAR_CONSTANTS`] appear (immediates or RIP-relative loads), by index.
    pub swar: [bool; 4],
    /// Start addresses of functions reached by `call rel32` or a tail `jmp` out of the function.
    pub callees: Vec<u64>,
    /// Calls through a register or memory operand: their targets are unknown statically.
    pub indirect_calls: u32,
    /// Positions that did not decode as instructions.
    pub invalid: u32,
}

impl FunctionScan {
    /// The SWAR sequence needs both the 0x5555… and the 0x3333… masks; 0x0f0f… or 0x0101…
    /// alone are ordinary chess masks (0x0101… is the A-file) and do not count.
    #[must_use]
    pub fn software_popcount(&self) -> bool {
        self.swar[0] && self.swar[1]
    }
}

/// Disassembles `function` and counts what the gate looks for.
#[must_use]
pub fn scan(binary: &Binary<'_>, function: &Function) -> FunctionScan {
    match binary.bytes_at(function.address, function.size) {
        Some(code) => scan_code(code, function.address, |address, len| {
            binary.bytes_at(address, len)
        }),
        // Code the gate cannot read cannot be vouched for: count it as undecodable.
        None => FunctionScan {
            invalid: 1,
            ..FunctionScan::default()
        },
    }
}

/// Disassembles `code` loaded at `address`; `read(address, len)` returns the bytes that a
/// RIP-relative operand loads (constant pools), if mapped.
pub fn scan_code<'a>(
    code: &[u8],
    address: u64,
    read: impl Fn(u64, u64) -> Option<&'a [u8]>,
) -> FunctionScan {
    let mut result = FunctionScan::default();
    let end = address + code.len() as u64;
    let mut decoder = Decoder::with_ip(64, code, address, DecoderOptions::NONE);
    let mut instruction = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut instruction);
        if instruction.is_invalid() {
            result.invalid += 1;
            continue;
        }
        match instruction.mnemonic() {
            Mnemonic::Popcnt => result.popcnt += 1,
            Mnemonic::Vpopcntb | Mnemonic::Vpopcntw | Mnemonic::Vpopcntd | Mnemonic::Vpopcntq => {
                result.vpopcnt += 1;
            }
            _ => {}
        }
        for index in 0..instruction.op_count() {
            if is_immediate(instruction.op_kind(index)) {
                mark_swar(
                    &mut result.swar,
                    &instruction.immediate(index).to_le_bytes(),
                );
            }
        }
        if instruction.is_ip_rel_memory_operand() {
            let size = instruction.memory_size().size().clamp(4, 64) as u64;
            if let Some(data) = read(instruction.ip_rel_memory_address(), size) {
                mark_swar(&mut result.swar, data);
            }
        }
        let direct = instruction.op_count() == 1 && instruction.op0_kind() == OpKind::NearBranch64;
        let target = instruction.near_branch_target();
        let leaves = !(address..end).contains(&target);
        let call = instruction.flow_control() == FlowControl::Call;
        let tail = instruction.flow_control() == FlowControl::UnconditionalBranch && leaves;
        if direct && (call || tail) && !result.callees.contains(&target) {
            result.callees.push(target);
        }
        if instruction.flow_control() == FlowControl::IndirectCall {
            result.indirect_calls += 1;
        }
    }
    result
}

fn is_immediate(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::Immediate32
            | OpKind::Immediate64
            | OpKind::Immediate32to64
            | OpKind::Immediate8to32
            | OpKind::Immediate8to64
    )
}

/// Marks each SWAR mask found as an aligned 8- or 4-byte lane of `data`.
fn mark_swar(found: &mut [bool; 4], data: &[u8]) {
    for (index, constant) in SWAR_CONSTANTS.iter().enumerate() {
        let wide = constant.to_le_bytes();
        let narrow = &wide[..4];
        let in_lanes =
            |width: usize, pattern: &[u8]| data.chunks_exact(width).any(|lane| lane == pattern);
        if in_lanes(8, &wide) || in_lanes(4, narrow) {
            found[index] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_lanes_are_found_at_both_widths() {
        let mut found = [false; 4];
        mark_swar(&mut found, &0x5555_5555_5555_5555u64.to_le_bytes());
        mark_swar(&mut found, &0x3333_3333u64.to_le_bytes());
        assert_eq!(found, [true, true, false, false]);
        let mut vector = [0u8; 16];
        vector[8..].copy_from_slice(&0x0f0f_0f0f_0f0f_0f0fu64.to_le_bytes());
        mark_swar(&mut found, &vector);
        assert_eq!(found, [true, true, true, false]);
    }

    /// Machine code at 0x1000: what the compiler emits for each case, encoded by hand.
    fn scan_bytes(code: &[u8], pool: &'static [u8]) -> FunctionScan {
        scan_code(code, 0x1000, move |address, len| {
            (address == 0x2000).then(|| &pool[..pool.len().min(len as usize)])
        })
    }

    #[test]
    fn counts_popcnt_and_vpopcnt() {
        let popcnt_rax_rdi = [0xf3, 0x48, 0x0f, 0xb8, 0xc7];
        let vpopcntq_zmm0_zmm1 = [0x62, 0xf2, 0xfd, 0x48, 0x55, 0xc1];
        let ret = [0xc3];
        let code: Vec<u8> = [
            &popcnt_rax_rdi[..],
            &popcnt_rax_rdi,
            &vpopcntq_zmm0_zmm1,
            &ret,
        ]
        .concat();
        let found = scan_bytes(&code, &[]);
        assert_eq!((found.popcnt, found.vpopcnt, found.invalid), (2, 1, 0));
        assert!(!found.software_popcount());
    }

    #[test]
    fn swar_masks_as_immediates_and_constant_pool_loads() {
        // movabs rax, 0x5555555555555555
        let mut code = vec![0x48, 0xb8];
        code.extend_from_slice(&0x5555_5555_5555_5555u64.to_le_bytes());
        // and rcx, [rip + disp] with the disp reaching 0x2000 (the pool holds 0x3333…)
        let after = 0x1000 + code.len() as i64 + 7;
        code.extend_from_slice(&[0x48, 0x23, 0x0d]);
        code.extend_from_slice(&i32::try_from(0x2000 - after).unwrap().to_le_bytes());
        code.push(0xc3);
        static POOL: [u8; 8] = [0x33; 8];
        let found = scan_bytes(&code, &POOL);
        assert_eq!(found.swar, [true, true, false, false]);
        assert!(found.software_popcount());
    }

    #[test]
    fn follows_direct_calls_and_tail_jumps_but_not_local_jumps() {
        // call 0x3000; jmp 0x1007 (inside: a loop); jmp 0x4000 (a tail call); call rax
        let mut code = vec![0xe8];
        code.extend_from_slice(&(0x3000i32 - 0x1005).to_le_bytes());
        code.extend_from_slice(&[0xeb, 0x00]);
        code.push(0xe9);
        code.extend_from_slice(&(0x4000i32 - 0x100c).to_le_bytes());
        code.extend_from_slice(&[0xff, 0xd0]);
        let found = scan_bytes(&code, &[]);
        assert_eq!(found.callees, vec![0x3000, 0x4000]);
        assert_eq!(found.indirect_calls, 1);
    }

    #[test]
    fn undecodable_bytes_are_counted() {
        let found = scan_bytes(&[0x0f, 0x0b, 0x06], &[]);
        assert!(found.invalid > 0, "{found:?}");
    }

    #[test]
    fn a_lone_file_mask_is_not_a_software_popcount() {
        let mut scan = FunctionScan::default();
        mark_swar(&mut scan.swar, &0x0101_0101_0101_0101u64.to_le_bytes());
        mark_swar(&mut scan.swar, &0x0f0f_0f0f_0f0f_0f0fu64.to_le_bytes());
        assert!(!scan.software_popcount());
        mark_swar(&mut scan.swar, &0x5555_5555u64.to_le_bytes());
        mark_swar(&mut scan.swar, &0x3333_3333_3333_3333u64.to_le_bytes());
        assert!(scan.software_popcount());
    }
}
